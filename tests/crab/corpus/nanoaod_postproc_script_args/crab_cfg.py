from CRABClient.UserUtilities import config
config = config()

config.section_("General")
config.General.requestName = 'NanoPost_TTToSemiLeptonic_2018'
config.General.transferLogs = True

config.section_("JobType")
config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'PSet.py'
config.JobType.scriptExe = 'crab_script.sh'
config.JobType.scriptArgs = ['era=2018', 'isMC=1', 'selection=semilep']
config.JobType.inputFiles = ['crab_script.py', 'scripts/haddnano.py', 'keep_and_drop.txt']
config.JobType.disableAutomaticOutputCollection = True
config.JobType.outputFiles = ['tree.root', 'hist.root']

config.section_("Data")
config.Data.inputDataset = '/TTToSemiLeptonic_TuneCP5_13TeV-powheg-pythia8/RunIISummer20UL18NanoAODv9-106X_upgrade2018_realistic_v16_L1v1-v1/NANOAODSIM'
config.Data.inputDBS = 'global'
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 2
config.Data.totalUnits = 10
config.Data.outLFNDirBase = '/store/user/someone/NanoPost'
config.Data.publication = False
config.Data.outputDatasetTag = 'NanoPost_2018_v1'

config.section_("Site")
config.Site.storageSite = 'T2_US_Wisconsin'
