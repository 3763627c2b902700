# Jet substructure on MiniAOD, with the AOD parents for the full PF candidates and tracks.
from CRABClient.UserUtilities import config

config = config()
config.General.requestName = 'JetHT_Run2018C_substructure_withAOD'
config.General.workArea = 'crab_substructure'
config.General.transferOutputs = True

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'substructure_cfg.py'
config.JobType.maxMemoryMB = 3000

config.Data.inputDataset = '/JetHT/Run2018C-UL2018_MiniAODv2-v1/MINIAOD'
config.Data.useParent = True
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 1
config.Data.totalUnits = 10
config.Data.publication = False

config.Site.storageSite = 'T2_IT_Pisa'
