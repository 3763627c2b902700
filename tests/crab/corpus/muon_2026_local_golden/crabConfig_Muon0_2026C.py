from CRABClient.UserUtilities import config, getUsernameFromCRIC

config = config()

config.General.requestName = 'Muon0_Run2026C_dimuon_v1'
config.General.workArea = 'crab_2026'
config.General.transferOutputs = True
config.General.instance = 'prod'

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'dimuon_scouting_cfg.py'
config.JobType.maxMemoryMB = 2500
config.JobType.pyCfgParams = ['--era=Run2026', '--isData']

config.Data.inputDataset = '/Muon0/Run2026C-PromptReco-v1/MINIAOD'
config.Data.splitting = 'LumiBased'
config.Data.unitsPerJob = 80
config.Data.lumiMask = 'Cert_Collisions2026_400010_400247_Golden.json'
config.Data.outLFNDirBase = '/store/user/%s/dimuon2026' % getUsernameFromCRIC()
config.Data.publication = False

config.Site.storageSite = 'T2_CH_CERN'
