from CRABClient.UserUtilities import config, getUsernameFromCRIC

config = config()

config.General.requestName = 'ZMuMu_Run3Summer23_skim'
config.General.workArea = 'crab_zmumu'
config.General.transferOutputs = True
config.General.transferLogs = True

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'zmumu_skim_cfg.py'
config.JobType.maxMemoryMB = 2000

config.Data.inputDataset = '/DYto2Mu_MLL-50to120_TuneCP5_13p6TeV_powheg-pythia8/Run3Summer23MiniAODv4-130X_mcRun3_2023_realistic_v14-v2/MINIAODSIM'
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 15
config.Data.outLFNDirBase = '/store/user/%s/zmumu_skims' % (getUsernameFromCRIC())
config.Data.publication = False

config.Site.storageSite = 'T2_XX_Local'
config.Site.blacklist = ['T2_US_Nebraska', 'T2_DE_DESY']
