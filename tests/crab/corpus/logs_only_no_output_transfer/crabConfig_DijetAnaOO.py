from CRABClient.UserUtilities import config
config = config()

config.General.requestName = 'DijetAnaOO_Data'
config.General.workArea = 'crab_projects'
config.General.transferOutputs = False    # <-- the script copies its output itself
config.General.transferLogs = True

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'PSet.py'
config.JobType.scriptExe = 'run_dijetana.sh'
config.JobType.inputFiles = ['OODijetAna', 'setup_env.sh']
config.JobType.scriptArgs = ['output=dijet.root', 'isMC=0']

config.Data.inputDataset = '/IonPhysics0/Run2025C-PromptReco-v1/MINIAOD'
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 1
config.Data.totalUnits = 5

# left for bookkeeping; nothing is staged out with transferOutputs off
config.Data.outLFNDirBase = '/store/user/someone/DijetAna/'
config.Data.publication = False
config.Site.storageSite = 'T2_CH_CERN'
