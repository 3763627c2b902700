# Private NanoAOD from the UL18 DY AODSIM, run multi-threaded.
from CRABClient.UserUtilities import config

config = config()
config.General.requestName = 'DYJetsToLL_M50_UL18_privateNano'
config.General.workArea = 'crab_nano'
config.General.transferOutputs = True
config.General.transferLogs = False

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'NANO_UL18_cfg.py'
config.JobType.numCores = 4
config.JobType.maxMemoryMB = 2500
config.JobType.allowUndistributedCMSSW = True

config.Data.inputDataset = '/DYJetsToLL_M-50_TuneCP5_13TeV-amcatnloFXFX-pythia8/RunIISummer20UL18RECO-106X_upgrade2018_realistic_v11_L1v1-v2/AODSIM'
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 1
config.Data.totalUnits = 20
config.Data.publication = False
config.Data.outputDatasetTag = 'privateNano_UL18'

config.Site.storageSite = 'T2_DE_DESY'
