from CRABAPI.RawCommand import crabCommand
from CRABClient.ClientExceptions import ClientException
from http.client import HTTPException

# One project area for every task this file sends, set before the loop below copies the config.
from CRABClient.UserUtilities import config
config = config()

config.section_("General")
config.General.workArea = 'crab_pPb_skims'
config.General.transferOutputs = True
config.General.transferLogs = False

config.section_('JobType')
config.JobType.pluginName = 'Analysis'
config.JobType.allowUndistributedCMSSW = True

config.section_('Data')
config.Data.inputDBS = 'global'
config.Data.splitting = 'LumiBased'
config.Data.publication = False

config.section_('Site')
config.Data.ignoreLocality = True
config.Site.whitelist = ['T1_US_*', 'T2_US_*', 'T2_CH_CERN']
config.Site.storageSite = 'T2_CH_CERN'

def submit(config):
    try:
        crabCommand('submit', config = config, dryrun=True)  # first look at the splitting, then set False
    except HTTPException as hte:
        print("Failed submitting task: %s" % (hte.headers))
    except ClientException as cle:
        print("Failed submitting task: %s" % (cle))

##########################################################################
## Below: one entry per primary dataset, the rest comes from above.  ##
##########################################################################

samples = {}
for i in range(1, 3):
    samples["PAHighMult%d" % i] = {"PD": "/PAHighMultiplicity%d/PARun2016C-PromptReco-v1/AOD" % i,
                                   "Units": 8, "Memory": 2400, "RunTime": 600, "PSet": "pPbSkim_HighMult_cfg.py"}

for key, val in samples.items():
    config.General.requestName = 'pPb8TeV_Skim_' + key
    config.Data.inputDataset = val["PD"]
    config.Data.unitsPerJob = val["Units"]
    config.JobType.psetName = val["PSet"]
    config.JobType.maxMemoryMB = val["Memory"]
    config.JobType.maxJobRuntimeMin = val["RunTime"]
    config.Data.outputDatasetTag = config.General.requestName
    submit(config)
