# Re-running a trigger path on 2023 AOD with the RAW data of the same lumis.
from WMCore.Configuration import Configuration

config = Configuration()

config.section_('General')
config.General.requestName = 'HLT_emulation_Muon0_2023D'
config.General.transferLogs = True

config.section_('JobType')
config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'hlt_rerun_cfg.py'
config.JobType.maxMemoryMB = 4000
config.JobType.numCores = 2

config.section_('Data')
config.Data.inputDataset = '/Muon0/Run2023D-PromptReco-v2/AOD'
config.Data.secondaryInputDataset = '/Muon0/Run2023D-v1/RAW'
config.Data.splitting = 'LumiBased'
config.Data.unitsPerJob = 10
config.Data.totalUnits = 100
config.Data.publication = False

config.section_('Site')
config.Site.storageSite = 'T2_CH_CERN'
