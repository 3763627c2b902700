from CRABClient.UserUtilities import config, getUsernameFromSiteDB
config = config()

# filled in by the production script; flags and numbers are written the way it prints them
config.General.requestName = 'Bacon_SingleElectron_2016H'
config.General.workArea = 'crab_projects'
config.General.transferOutputs = 1
config.General.transferLogs = 1
config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'makingBacon_Data_25ns_MINIAOD.py'
config.JobType.outputFiles = ['Output.root']
config.JobType.allowUndistributedCMSSW = 1
config.JobType.maxMemoryMB = '2500'
#config.Data.lumiMask = 'notFinishedLumis.json'
config.Data.inputDataset = '/SingleElectron/Run2016H-17Jul2018-v1/MINIAOD'
config.Data.inputDBS = 'global'
config.Data.splitting = 'EventAwareLumiBased'
config.Data.unitsPerJob = '35000'
config.Data.outLFNDirBase = '/store/group/lpcbacon/15/Bacon_SingleElectron_2016H/'
config.Data.publication = 0
config.Data.outputDatasetTag = 'CRAB3'
config.Site.storageSite = 'T3_US_FNALLPC'
