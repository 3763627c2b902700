from CRABClient.UserUtilities import config

config = config()
config.General.requestName = 'ttbar'
config.General.workArea = 'crab_projects'

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'pset.py'

config.Data.inputDataset = '/TTbar_TuneCP5_13p6TeV/Run3Summer23-v1/AODSIM'
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 2
config.Data.totalUnits = 8
config.Data.publication = False

config.Site.storageSite = 'T2_CH_CERN'

# crabtui's own: 100 simulated seconds a second, and job 2's first attempt fails for good
# (8006, a code CRAB's retry policy does not retry), for `crabtui task resubmit ttbar` to run again.
config.Debug.timeScale = 100
config.Debug.failurePlan = [{'job': '2', 'attempt': 1, 'exitCode': 8006}]
