from CRABClient.UserUtilities import config
import datetime

config = config()
stamp = datetime.date(2024, 5, 17).strftime('%Y%m%d')

config.General.requestName = 'DYJetsToLL_UL17_nano_' + stamp
config.General.workArea = 'crab_dy'

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'PSet.py'
config.JobType.scriptExe = 'crab_script.sh'
config.JobType.inputFiles = ['crab_script.py', 'keep_and_drop.txt']

config.Data.inputDataset = '/DYJetsToLL_M-50_TuneCP5_13TeV-amcatnloFXFX-pythia8/RunIISummer20UL17NanoAODv9-106X_mc2017_realistic_v9-v2/NANOAODSIM'
config.Data.splitting = 'Automatic'
config.Data.unitsPerJob = 360
config.Data.publication = False
config.Data.outLFNDirBase = '/store/group/phys_smp/DY'

config.Site.storageSite = 'T2_CH_CERN'
config.Site.whitelist = ['T2_CH_*', 'T2_IT_*']
