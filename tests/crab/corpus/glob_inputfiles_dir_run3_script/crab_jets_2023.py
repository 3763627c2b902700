import glob
from CRABClient.UserUtilities import config
config = config()

config.General.requestName = 'QCD_PT-80to120_Summer23_jets'
config.General.workArea = 'crab_jets_2023'
config.General.transferOutputs = True

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'PSet.py'
config.JobType.scriptExe = 'run_jets.sh'
config.JobType.scriptArgs = ['era=2023C', 'jetType=AK4PFPuppi']
# the JEC text files by pattern, and the whole data/ directory
config.JobType.inputFiles = sorted(glob.glob('corrections/jec/Summer23_V2_MC_*_AK4PFPuppi.txt')) + ['data']
config.JobType.outputFiles = ['jets_hist.txt']
config.JobType.maxJobRuntimeMin = 300
config.JobType.allowUndistributedCMSSW = True

config.Data.inputDataset = '/QCD_PT-80to120_TuneCP5_13p6TeV_pythia8/Run3Summer23MiniAODv4-130X_mcRun3_2023_realistic_v14-v2/MINIAODSIM'
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 1
config.Data.totalUnits = 3
config.Data.publication = False

config.Site.storageSite = 'T3_CH_CERNBOX'
config.Debug.extraJDL = ['+REQUIRED_OS="rhel8"', '+CMS_ALLOW_OVERFLOW=False']
