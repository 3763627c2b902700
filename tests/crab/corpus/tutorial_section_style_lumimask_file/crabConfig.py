from WMCore.Configuration import Configuration
config = Configuration()

config.section_("General")
config.General.requestName = 'tutorial_Data_analysis_test5'
config.General.workArea = 'crab_projects'
config.General.transferLogs = True

config.section_("JobType")
config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'pset_tutorial_analysis.py'
config.JobType.pyCfgParams = ['isData=True', 'outputFile=output.root']
config.JobType.inputFiles = ['calib.txt']
config.JobType.outputFiles = ['histos.root']

config.section_("Data")
config.Data.inputDataset = '/DoubleMuon/Run2016C-03Feb2017-v1/MINIAOD'
config.Data.lumiMask = 'Cert_271036-284044_13TeV_23Sep2016ReReco_Collisions16_JSON.txt'
config.Data.runRange = '275776-275782'
config.Data.splitting = 'Automatic'
config.Data.publication = False
config.Data.outputDatasetTag = 'CRAB3_tutorial_Data_analysis_test5'

config.section_("Site")
config.Site.storageSite = 'T2_IT_Legnaro'

config.section_("User")
config.User.voGroup = 'dcms'
