from CRABClient.UserUtilities import config
from CRABClient.UserUtilities import getUsernameFromCRIC


def get_config_default() :

    crab_cfg = config()

    crab_cfg.General.workArea = "crab_submit"
    crab_cfg.General.transferOutputs = True
    crab_cfg.General.transferLogs = False

    crab_cfg.JobType.pluginName = "Analysis"
    crab_cfg.JobType.maxMemoryMB = 2500
    crab_cfg.JobType.allowUndistributedCMSSW = True

    crab_cfg.Data.inputDBS = "global"
    crab_cfg.Data.splitting = "EventAwareLumiBased"
    crab_cfg.Data.unitsPerJob = 50000
    crab_cfg.Data.publication = False
    crab_cfg.Data.outLFNDirBase = f"/store/user/{getUsernameFromCRIC()}/ntuples"

    crab_cfg.Site.storageSite = "T2_DE_DESY"

    return crab_cfg
