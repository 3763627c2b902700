from WMCore.Configuration import Configuration
from custom_crab import custom_crab

config = Configuration()

config.section_('General')
config.General.requestName = 'EFTFit_ttH_scan'
config.General.transferLogs = True

config.section_('JobType')
config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'do_nothing_cfg.py'
config.JobType.scriptExe = 'combine_scan.sh'
config.JobType.inputFiles = ['EFTWorkspace.root', 'combine_scan.sh']
config.JobType.outputFiles = ['higgsCombine.root']

config.section_('Data')
config.Data.outputPrimaryDataset = 'EFTFit'
config.Data.userInputFiles = ['/store/user/someone/EFT/dummy_%d.root' % i for i in range(1, 5)]
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 1
config.Data.publication = False

config.section_('Site')
config.Site.whitelist = ['T2_US_*', 'T3_US_NotreDame']

config.section_('User')

custom_crab(config)
