from CRABClient.UserUtilities import config, getUsernameFromSiteDB
config = config()

config.General.requestName = 'MET_Run2016E_monojet_v1'
config.General.workArea = 'crab_monojet'
config.General.transferOutputs = True
config.General.transferLogs = False

config.JobType.pluginName = 'analysis'
config.JobType.psetName = 'monojet_cfg.py'
config.JobType.outputFiles = ['monojet.root']

config.Data.inputDataset = '/MET/Run2016E-17Jul2018-v1/MINIAOD'
config.Data.inputDBS = 'global'
config.Data.splitting = 'EventAwareLumiBased'
config.Data.unitsPerJob = 300000
#config.Data.lumiMask = 'https://cms-service-dqmdc.web.cern.ch/CAF/certification/Collisions16/13TeV/Legacy_2016/Cert_271036-284044_13TeV_Legacy2016_Collisions16_JSON.txt'
config.Data.outLFNDirBase = '/store/user/%s/' % (getUsernameFromSiteDB())
config.Data.publication = False

config.Site.storageSite = 'T2_US_Wisconsin'
