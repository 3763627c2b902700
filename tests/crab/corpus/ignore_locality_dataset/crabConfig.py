from CRABClient.UserUtilities import config

config = config()
config.General.requestName = 'DoubleEG_2017_xrootd_ignoreLocality'
config.General.workArea = 'crab_diphoton'

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'diphoton_cfg.py'

config.Data.inputDataset = '/DoubleEG/Run2017E-UL2017_MiniAODv2-v1/MINIAOD'
config.Data.ignoreLocality = True
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 5
config.Data.publication = False

config.Site.whitelist = ['T2_CH_CERN', 'T2_IT_Pisa', 'T3_CH_PSI']
config.Site.storageSite = 'T3_CH_PSI'
