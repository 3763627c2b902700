from WMCore.Configuration import Configuration

NJOBS = 40
EVENTS_PER_JOB = 1000

config = Configuration()

config.section_('General')
config.General.requestName = 'HToAATo4B_M-20_RunIISummer20UL18wmLHEGEN_v1'
config.General.workArea = 'crab_privateMC'
config.General.transferOutputs = True
config.General.transferLogs = False

config.section_('JobType')
config.JobType.pluginName = 'PrivateMC'
config.JobType.psetName = 'HIG-RunIISummer20UL18wmLHEGEN_cfg.py'
config.JobType.inputFiles = ['HToAATo4B_M20_slc7_amd64_gcc700_CMSSW_10_6_19_tarball.tar.xz']
config.JobType.pyCfgParams = ['nThreads=4', 'seedOffset=1234']
config.JobType.numCores = 4
config.JobType.maxMemoryMB = 8000
config.JobType.maxJobRuntimeMin = 2000

config.JobType.allowUndistributedCMSSW = True

config.section_('Data')
config.Data.outputPrimaryDataset = 'SUSYGluGluToHToAA_AToBB_M-20_TuneCP5_13TeV_madgraph_pythia8'
config.Data.splitting = 'EventBased'
config.Data.unitsPerJob = EVENTS_PER_JOB
config.Data.lumisPerFile = 2
config.Data.totalUnits = EVENTS_PER_JOB * NJOBS
config.Data.outLFNDirBase = '/store/group/phys_higgs/HToAA/'
config.Data.publication = True
config.Data.outputDatasetTag = 'RunIISummer20UL18_wmLHEGEN_v1'

config.section_('Site')
config.Site.storageSite = 'T3_US_FNALLPC'
config.Site.blacklist = ['T2_US_Vanderbilt', 'T3_*']

config.section_('User')
config.User.voGroup = 'uscms'
