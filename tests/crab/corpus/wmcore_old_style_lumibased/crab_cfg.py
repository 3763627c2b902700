from WMCore.Configuration import Configuration
config = Configuration()

config.section_("General")
config.General.requestName = 'DoubleMuon_2016H_Zmumu'
config.General.workArea = 'crab_zmumu'
config.General.transferOutputs = True
config.General.transferLogs = True

config.section_("JobType")
config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'zmumu_analyzer_cfg.py'
config.JobType.outputFiles = ['zmumu.root']

config.section_("Data")
config.Data.inputDataset = '/DoubleMuon/Run2016H-17Jul2018-v1/AOD'
config.Data.inputDBS = 'global'
config.Data.splitting = 'LumiBased'
config.Data.unitsPerJob = 20
config.Data.publication = False

config.section_("Site")
config.Site.storageSite = "T2_UK_London_IC"
config.Site.blacklist = ["T2_US_Nebraska", "T2_DE_DESY"]
