from CRABClient.UserUtilities import config

config = config()
config.General.requestName = 'ZeroBias_2023C_rereco_8threads'
config.General.workArea = 'crab_rereco'
config.General.transferOutputs = True
config.General.transferLogs = True

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'reco_RAW2DIGI_L1Reco_RECO_cfg.py'
config.JobType.numCores = 8
config.JobType.maxMemoryMB = 14000
config.JobType.maxJobRuntimeMin = 2750

config.Data.inputDataset = '/ZeroBias/Run2023C-v1/RAW'
config.Data.splitting = 'LumiBased'
config.Data.unitsPerJob = 2
config.Data.totalUnits = 60
config.Data.publication = False

config.Site.storageSite = 'T2_CH_CERN'
config.Site.whitelist = ['T2_CH_CERN', 'T1_US_FNAL']
