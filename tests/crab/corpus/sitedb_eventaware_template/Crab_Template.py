from CRABClient.UserUtilities import config, getUsernameFromSiteDB
config = config()

config.General.requestName = 'VLF_ZeroBias_2017F'
config.General.workArea = 'crab_projects'
config.General.transferOutputs = True
config.General.transferLogs = True

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'ConfFile_cfg.py'
#config.JobType.maxMemoryMB = 2500

config.Data.inputDataset = '/ZeroBias/Run2017F-31Mar2018-v1/AOD'
config.Data.inputDBS = 'global'
#config.Data.splitting = 'FileBased'
config.Data.splitting = 'EventAwareLumiBased'
config.Data.unitsPerJob = 500000
config.Data.outLFNDirBase = '/store/user/%s/VLF_ANA/' % (getUsernameFromSiteDB())
config.Data.publication = False
config.Data.outputDatasetTag = 'VLF_ZeroBias_2017F'

config.Site.storageSite = 'T2_CH_CERNBOX'
