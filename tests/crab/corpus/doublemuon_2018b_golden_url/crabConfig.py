from CRABClient.UserUtilities import config, getUsernameFromCRIC

config = config()

config.General.requestName = 'DoubleMuon_Run2018B_dimuon_skim'
config.General.workArea = 'crab_dimuon'
config.General.transferOutputs = True
config.General.transferLogs = False

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'dimuon_skim_cfg.py'
config.JobType.maxMemoryMB = 2500

config.Data.inputDataset = '/DoubleMuon/Run2018B-UL2018_MiniAODv2-v1/MINIAOD'
config.Data.inputDBS = 'global'
config.Data.splitting = 'LumiBased'
config.Data.unitsPerJob = 40
config.Data.lumiMask = 'https://cms-service-dqmdc.web.cern.ch/CAF/certification/Collisions18/13TeV/Legacy_2018/Cert_314472-325175_13TeV_Legacy2018_Collisions18_JSON.txt'
config.Data.outLFNDirBase = '/store/user/%s/dimuon2018' % (getUsernameFromCRIC())
config.Data.publication = False
config.Data.outputDatasetTag = 'DimuonSkim_2018B'

config.Site.storageSite = 'T3_US_FNALLPC'
