from WMCore.Configuration import Configuration
import os

config = Configuration()
config.section_('General')
config.General.requestName = 'WJetsToLNu_2016_test10files'
config.General.workArea = os.path.join(os.getcwd(), 'crab_wjets')
config.General.transferOutputs = True

config.section_('JobType')
config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'wjets_cfg.py'
config.JobType.allowUndistributedCMSSW = True

config.section_('Data')
config.Data.inputDataset = '/WJetsToLNu_TuneCUETP8M1_13TeV-madgraphMLM-pythia8/RunIISummer16MiniAODv3-PUMoriond17_94X_mcRun2_asymptotic_v3-v2/MINIAODSIM'
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 1
config.Data.totalUnits = 10
config.Data.publication = False

config.section_('Site')
config.Site.storageSite = 'T2_BE_IIHE'

config.section_('User')
config.section_('Debug')
