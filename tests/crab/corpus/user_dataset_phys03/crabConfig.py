from CRABClient.UserUtilities import config

config = config()
config.General.requestName = 'Zprime_private_MINIAOD_to_ntuple'
config.General.workArea = 'crab_zprime'

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'zprime_ntuple_cfg.py'

config.Data.inputDataset = '/ZprimeToTT_M3000_W30_TuneCP5_13TeV-madgraph-pythia8/jdoe-Zprime_MINIAOD_v2-0123456789abcdef0123456789abcdef/USER'
config.Data.inputDBS = 'phys03'
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 10
config.Data.publication = False

config.Site.storageSite = 'T2_US_Nebraska'
