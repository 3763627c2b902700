from CRABClient.UserUtilities import config

config = config()
config.General.requestName = 'HiggsToBB_2017_bdt_inputs'
config.General.workArea = 'crab_hbb'
config.General.transferOutputs = True

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'PSet.py'
config.JobType.scriptExe = 'run_analysis.sh'
config.JobType.scriptArgs = ['era=2017', 'channel=bb']
config.JobType.inputFiles = ['analyzer.py', 'weights/bdt_v7.xml']
config.JobType.outputFiles = ['bdt_inputs.root']
config.JobType.sendExternalFolder = True

config.Data.inputDataset = '/GluGluHToBB_M125_TuneCP5_13TeV-powheg-pythia8/RunIISummer20UL17MiniAODv2-106X_mc2017_realistic_v9-v2/MINIAODSIM'
config.Data.splitting = 'EventAwareLumiBased'
config.Data.unitsPerJob = 200000
config.Data.publication = False

config.Site.storageSite = 'T2_US_Nebraska'
config.Site.blacklist = ['T2_DE_DESY']
