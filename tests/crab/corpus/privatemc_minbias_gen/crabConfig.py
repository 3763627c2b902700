from CRABClient.UserUtilities import config

config = config()

config.General.requestName = 'MinBias_TuneCP5_14TeV_GEN_private'
config.General.workArea = 'crab_gen'
config.General.transferOutputs = True
config.General.transferLogs = False

config.JobType.pluginName = 'PrivateMC'
config.JobType.psetName = 'MinBias_14TeV_pythia8_TuneCP5_cfi_GEN.py'
config.JobType.maxMemoryMB = 2000

config.Data.outputPrimaryDataset = 'MinBias_TuneCP5_14TeV-pythia8'
config.Data.splitting = 'EventBased'
config.Data.unitsPerJob = 500
NJOBS = 40
config.Data.totalUnits = config.Data.unitsPerJob * NJOBS
config.Data.publication = True
config.Data.outputDatasetTag = 'GEN_private_v1'

config.Site.storageSite = 'T2_CH_CERN'
