from CRABClient.UserUtilities import config, getUsernameFromCRIC

config = config()

config.General.requestName = 'BsToPhiPhi_ntuples_UL18_privateMINIAOD'
config.General.workArea = 'crab_bsphiphi'
config.General.transferOutputs = True

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'BsPhiPhiAnalyzer_cfg.py'
config.JobType.pyCfgParams = ['isMC=1', 'year=2018']
config.JobType.outputFiles = ['BsPhiPhi_ntuple.root']
config.JobType.allowUndistributedCMSSW = True

config.Data.inputDataset = '/BsToPhiPhi_4K_TuneCP5_13TeV-pythia8-evtgen/ssmith-RunIISummer20UL18MiniAODv2-private-5c1b7a2e9d3f4a6b8c0e2f4a6b8c0d1e/USER'
config.Data.inputDBS = 'phys03'
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 5
config.Data.outLFNDirBase = '/store/user/%s/BsPhiPhi' % getUsernameFromCRIC()
config.Data.publication = False

config.Site.whitelist = ['T2_US_*', 'T3_US_FNALLPC']
config.Site.blacklist = ['T2_US_Caltech']
config.Site.storageSite = 'T3_US_FNALLPC'
