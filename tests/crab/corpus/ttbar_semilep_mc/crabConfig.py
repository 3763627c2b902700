from CRABClient.UserUtilities import config, getUsernameFromCRIC

config = config()

config.General.requestName = 'TTToSemiLeptonic_UL18_ntuples_v3'
config.General.workArea = 'crab_projects'
config.General.transferOutputs = True
config.General.transferLogs = False

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'ntuplizer_cfg.py'
config.JobType.pyCfgParams = ['isMC=True', 'era=2018', 'outputFile=ntuple.root']
config.JobType.outputFiles = ['ntuple.root']
config.JobType.maxMemoryMB = 2500
config.JobType.allowUndistributedCMSSW = True

config.Data.inputDataset = '/TTToSemiLeptonic_TuneCP5_13TeV-powheg-pythia8/RunIISummer20UL18MiniAODv2-106X_upgrade2018_realistic_v16_L1v1-v2/MINIAODSIM'
config.Data.inputDBS = 'global'
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 2
config.Data.outLFNDirBase = '/store/user/%s/ttbar_ntuples' % (getUsernameFromCRIC())
config.Data.publication = False
config.Data.outputDatasetTag = 'UL18_ntuples_v3'

config.Site.storageSite = 'T3_US_FNALLPC'
