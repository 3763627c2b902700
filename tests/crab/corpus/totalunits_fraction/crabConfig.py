from CRABClient.UserUtilities import config
config = config()

config.General.requestName = 'QCD_Pt-15to7000_flat_10percent'
config.General.workArea = 'crab_qcd'

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'jet_response_cfg.py'

config.Data.inputDataset = '/QCD_Pt-15to7000_TuneCP5_Flat2018_13TeV_pythia8/RunIISummer20UL18MiniAODv2-106X_upgrade2018_realistic_v16_L1v1-v1/MINIAODSIM'
config.Data.splitting = 'EventAwareLumiBased'
config.Data.unitsPerJob = 50000
config.Data.totalUnits = 0.1  # 10 % of the sample is enough for the response study
config.Data.publication = False

config.Site.storageSite = 'T2_FR_GRIF_LLR'
