from CRABClient.UserUtilities import config

config = config()
config.General.requestName = 'reprocess_lhe_files'

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'lhe_to_nano_cfg.py'
config.JobType.maxMemoryMB = 3000

# one file name per line, as CRAB's documentation suggests
config.Data.userInputFiles = open('input_files.txt').read().split()
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 3
config.Data.totalUnits = -1
config.Data.publication = False
config.Data.ignoreLocality = True

config.Site.whitelist = ['T2_US_*', 'T3_US_FNALLPC']
config.Site.storageSite = 'T3_US_FNALLPC'
