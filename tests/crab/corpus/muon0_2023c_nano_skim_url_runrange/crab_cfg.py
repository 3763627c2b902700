from CRABClient.UserUtilities import config, getUsernameFromCRIC

config = config()

config.section_("General")
config.General.requestName = 'Muon0_Run2023C_dimuonSkim_v1'
config.General.transferLogs = True

config.section_("JobType")
config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'PSet.py'
config.JobType.scriptExe = 'crab_script.sh'
config.JobType.inputFiles = ['crab_script.py', 'scripts/haddnano.py', 'keep_and_drop_dimuon.txt']

config.section_("Data")
config.Data.inputDataset = '/Muon0/Run2023C-22Sep2023_v4-v1/NANOAOD'
config.Data.inputDBS = 'global'
config.Data.splitting = 'LumiBased'
config.Data.unitsPerJob = 200
config.Data.lumiMask = 'https://cms-service-dqmdc.web.cern.ch/CAF/certification/Collisions23/Cert_Collisions2023_366442_370790_Golden.json'
config.Data.runRange = '367080-367515'
config.Data.outLFNDirBase = '/store/user/%s/NanoPost' % (getUsernameFromCRIC())
config.Data.publication = False
config.Data.outputDatasetTag = 'Run2023C_dimuon_skim'

config.section_("Site")
config.Site.storageSite = "T2_IT_Legnaro"
