"""
CRAB3 config for the tag-and-probe trees of the 2022 EGamma data.
    crab submit -c crab_tnp_cfg.py
    crab status -d crab_tnp/crab_TnP_EGamma_2022E --long
"""
from CRABClient.UserUtilities import config
config = config()

config.General.requestName = 'TnP_EGamma_2022E'
config.General.workArea = 'crab_tnp'
config.General.failureLimit = 50
config.General.instance = 'prod'

config.JobType.psetName = 'tnp_cfg.py'
config.JobType.maxMemoryMB = 2500
config.JobType.priority = 20
config.JobType.disableAutomaticOutputCollection = False

config.Data.inputDataset = '/EGamma/Run2022E-27Jun2023-v1/MINIAOD'
config.Data.partialDataset = True
config.Data.splitting = 'LumiBased'
config.Data.unitsPerJob = 30
config.Data.totalUnits = 300
config.Data.publication = False

config.Site.storageSite = 'T2_FR_GRIF_LLR'
config.Site.blacklist = ['T2_US_Nebraska']
