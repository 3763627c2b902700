from CRABClient.UserUtilities import config
config = config()

config.General.requestName = 'LLP_HNL_M5_reco_privateFiles'
config.General.workArea = 'crab_projects'
config.General.transferOutputs = True

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'reco_HNL_cfg.py'
config.JobType.maxMemoryMB = 3000

# the GEN-SIM files written by the earlier private step, one LFN a line, as the CRAB twiki shows it
config.Data.userInputFiles = open('hnl_m5_gensim_files.txt').readlines()
config.Data.outputPrimaryDataset = 'HNL_M5_ctau10mm_private'
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 2
config.Data.publication = False

config.Site.whitelist = ['T2_BE_IIHE', 'T2_CH_CERN']
config.Site.storageSite = 'T2_BE_IIHE'
