from CRABClient.UserUtilities import config
config = config()

config.section_("General")
config.General.requestName = 'HiForest_ppRef2024_HardProbes1_firstFill'
config.General.workArea = 'crab_forests'
config.General.transferOutputs = True
config.General.transferLogs = False

config.section_('JobType')
config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'forest_miniAOD_ppRef_DATA.py'
config.JobType.maxMemoryMB = 3000
config.JobType.allowUndistributedCMSSW = True

config.section_('Data')
config.Data.inputDataset = '/PPRefHardProbes1/Run2024J-PromptReco-v1/MINIAOD'
# the reader's address, as the DBS web page shows it, rather than its alias
config.Data.inputDBS = 'https://cmsweb.cern.ch/dbs/prod/global/DBSReader'
config.Data.runRange = '387474-387480'  # the first fill only, while the JSON is not out yet
config.Data.splitting = 'LumiBased'
config.Data.unitsPerJob = 5
config.Data.allowNonValidInputDataset = True
config.Data.publication = False

config.section_('Site')
config.Site.storageSite = 'T2_CH_CERN'

# the dedicated queue at CERN, asked for by hand
config.section_("Debug")
config.Debug.extraJDL = ['+DESIRED_Sites="T2_CH_CERN"', '+JOB_CMSSite="T2_CH_CERN"',
                         '+AccountingGroup="highprio.hiforest"']
