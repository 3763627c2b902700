from WMCore.Configuration import Configuration
config = Configuration()

card = 'cardDijetPbPb2023.input'
jobTag = 'dijetPbPb2023_pfJets_eta1v6_mixing_part1'
inputList = 'PbPb2023_jetSkim_part1.txt'
outputFile = jobTag + '.root'
fileLocation = '1'  # where the skims are read from: 0 = Purdue, 1 = CERN, 2 = any xrootd door

config.section_("General")
config.General.requestName = jobTag
config.General.workArea = config.General.requestName  # one area per part, named as the task

config.section_("JobType")
config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'PSet.py'  # a do-nothing pset: the histogramming is a compiled macro
config.JobType.scriptExe = 'compileAndRun.sh'
config.JobType.scriptArgs = ['card=' + card, 'output=' + outputFile, 'location=' + fileLocation]
config.JobType.inputFiles = ['FrameworkJobReport.xml', 'dijetMacro.tar.gz', card]
config.JobType.outputFiles = [outputFile]
config.JobType.maxJobRuntimeMin = 800
config.JobType.maxMemoryMB = 1700

config.section_("Data")
config.Data.userInputFiles = open(inputList).readlines()
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 1
config.Data.totalUnits = len(config.Data.userInputFiles)
config.Data.outputPrimaryDataset = 'diJetPbPb2023Histograms'
config.Data.outLFNDirBase = '/store/user/someone/' + config.General.requestName
config.Data.publication = False

config.section_("Site")
config.Site.whitelist = ['T2_CH_CERN']
config.Site.storageSite = 'T3_US_FNALLPC'

# keep the jobs at the whitelisted site, no overflow to others
config.section_("Debug")
config.Debug.extraJDL = ['+CMS_ALLOW_OVERFLOW=False']
