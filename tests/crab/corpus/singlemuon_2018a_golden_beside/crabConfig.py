# Tag-and-probe ntuples of 2018A, on the certified lumis (the Cert file copied here as golden.json).
from CRABClient.UserUtilities import config

config = config()
config.General.requestName = 'TnP_SingleMuon_2018A'
config.General.workArea = 'crab_projects'
config.General.transferOutputs = True

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'tnp_ntuplizer_cfg.py'
config.JobType.outputFiles = ['tnp.root']

config.Data.inputDataset = '/SingleMuon/Run2018A-UL2018_MiniAODv2-v3/MINIAOD'
config.Data.lumiMask = 'golden.json'
config.Data.splitting = 'LumiBased'
config.Data.unitsPerJob = 50
config.Data.publication = False
config.Data.outLFNDirBase = '/store/user/jdoe/tnp'

config.Site.storageSite = 'T2_US_Wisconsin'
