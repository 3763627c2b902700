# Private signal production from a gridpack: the script unpacks it and runs GEN-SIM in 4 threads.
from WMCore.Configuration import Configuration

config = Configuration()

config.section_('General')
config.General.requestName = 'HToZdZd_MZd20_GENSIM_2018'
config.General.workArea = 'crab_signal'
config.General.transferOutputs = True

config.section_('JobType')
config.JobType.pluginName = 'PrivateMC'
config.JobType.psetName = 'HIG-RunIIFall18wmLHEGS_cfg.py'
config.JobType.scriptExe = 'run_gridpack.sh'
config.JobType.scriptArgs = ['nEvents=200', 'nThreads=4']
config.JobType.inputFiles = ['HToZdZd_MZd20_slc7_amd64_gcc700_tarball.tar.xz', 'run_gridpack.sh']
config.JobType.numCores = 4
config.JobType.maxMemoryMB = 8000
config.JobType.outputFiles = ['GENSIM.root']

config.section_('Data')
config.Data.outputPrimaryDataset = 'HToZdZdTo4L_MZd20_TuneCP5_13TeV'
config.Data.splitting = 'EventBased'
config.Data.unitsPerJob = 200
config.Data.totalUnits = 4000
config.Data.lumisPerFile = 2
config.Data.publication = False

config.section_('Site')
config.Site.storageSite = 'T2_US_Nebraska'

config.section_('User')
config.User.voGroup = 'uscms'
