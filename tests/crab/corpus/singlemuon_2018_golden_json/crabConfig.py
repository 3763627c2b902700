# Muon efficiencies on the 2018 UL SingleMuon data, certified lumis only.
from CRABClient.UserUtilities import config

config = config()
config.General.requestName = 'SingleMuon_Run2018C_TnP'
config.General.workArea = 'crab_tnp'
config.General.transferLogs = True

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'tnp_cfg.py'
config.JobType.maxMemoryMB = 2000
config.JobType.maxJobRuntimeMin = 1800

config.Data.inputDataset = '/SingleMuon/Run2018C-UL2018_MiniAODv2-v2/MINIAOD'
config.Data.lumiMask = 'Cert_314472-325175_13TeV_Legacy2018_Collisions18_JSON.txt'
config.Data.splitting = 'LumiBased'
config.Data.unitsPerJob = 200
config.Data.publication = False

config.Site.storageSite = 'T2_DE_DESY'
config.Site.blacklist = ['T2_US_Nebraska']
