from CRABClient.UserUtilities import config
config = config()

config.JobType.psetName = 'analysis_cfg.py'
config.Data.inputDataset = '/MuonEG/Run2017F-UL2017_MiniAODv2-v1/MINIAOD'
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 4
config.Data.publication = False
config.Site.storageSite = 'T2_IT_Pisa'
