from CRABClient.UserUtilities import config, getUsernameFromCRIC
config = config()

config.General.requestName = 'tutorial_Aug2021_Data_analysis'
config.General.workArea = 'crab_projects'
config.General.transferOutputs = True

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'pset_tutorial_analysis.py'

config.Data.inputDataset = '/DoubleMuon/Run2016C-03Feb2017-v1/MINIAOD'
config.Data.inputDBS = 'global'
config.Data.splitting = 'LumiBased'
config.Data.unitsPerJob = 20
config.Data.lumiMask = 'https://cms-service-dqmdc.web.cern.ch/CAF/certification/Collisions16/13TeV/Cert_271036-284044_13TeV_23Sep2016ReReco_Collisions16_JSON.txt'
config.Data.runRange = '275776-275782'
config.Data.outLFNDirBase = '/store/user/%s/' % (getUsernameFromCRIC())
config.Data.publication = True
config.Data.outputDatasetTag = 'CRAB3_tutorial_Aug2021_Data_analysis'

config.Site.storageSite = 'T2_CH_CERN'
