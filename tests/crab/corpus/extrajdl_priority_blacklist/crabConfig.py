from CRABClient.UserUtilities import config

config = config()
config.General.requestName = 'BTagMu_2016_calibration_urgent'
config.General.workArea = 'crab_btag'

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'btag_calib_cfg.py'
config.JobType.priority = 20
config.JobType.maxJobRuntimeMin = 600

config.Data.inputDataset = '/BTagMu/Run2016G-21Feb2020_UL2016-v1/MINIAOD'
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 3
config.Data.publication = False

config.Site.storageSite = 'T1_US_FNAL_Disk'
config.Site.blacklist = ['T2_US_Nebraska', 'T1_*']
config.Site.ignoreGlobalBlacklist = True

config.Debug.extraJDL = ['+CMS_ALLOW_OVERFLOW=False', '+AccountingGroup="highprio.btagcalib"']
