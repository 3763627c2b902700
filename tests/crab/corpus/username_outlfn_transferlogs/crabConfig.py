from CRABClient.UserUtilities import config, getUsernameFromCRIC as getUsername

config = config()

config.General.requestName = 'Tau_Run2018D_tautau_v2'
config.General.workArea = 'crab_tautau'
config.General.transferOutputs = True
config.General.transferLogs = True

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'tautau_cfg.py'
config.JobType.outputFiles = ['tautau_tree.root']
config.JobType.maxMemoryMB = 2500

config.Data.inputDataset = '/Tau/Run2018D-UL2018_MiniAODv2-v1/MINIAOD'
config.Data.splitting = 'LumiBased'
config.Data.unitsPerJob = 150
config.Data.outLFNDirBase = '/store/user/{}/tautau/2018'.format(getUsername())
config.Data.publication = True
config.Data.outputDatasetTag = 'tautau_v2'
config.Data.publishDBS = 'phys03'

config.Site.storageSite = 'T2_BE_IIHE'
