from CRABClient.UserUtilities import config

config = config()

config.General.requestName = 'DarkPhoton_M2_ctau10mm_RECO_2022'
config.General.workArea = 'crab_darkphoton'
config.General.transferLogs = True

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'step2_RAW2DIGI_RECO_cfg.py'
config.JobType.numCores = 2
config.JobType.maxMemoryMB = 4000

# RAW files produced privately at step 1, one per generation job
config.Data.userInputFiles = ['/store/user/jdoe/DarkPhoton/M2_ctau10mm/RAW/step1_%d.root' % i for i in range(1, 41)]
config.Data.outputPrimaryDataset = 'DarkPhotonToMuMu_M2_ctau10mm_TuneCP5_13p6TeV_pythia8'
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 4
config.Data.ignoreLocality = True
config.Data.publication = False
config.Data.outputDatasetTag = 'Run3Summer22_RECO_private'

config.Site.whitelist = ['T2_US_*', 'T2_CH_CERN']
config.Site.storageSite = 'T2_US_Wisconsin'
