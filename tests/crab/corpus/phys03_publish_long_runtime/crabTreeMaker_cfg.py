
from CRABClient.UserUtilities import config, getUsernameFromSiteDB
config = config()


config.General.requestName = 'SkimTau3Mu_DsToTauTo3Mu_2018_v7_noTrg'
config.General.workArea = 'crab_projects'
config.General.transferOutputs = True
config.General.transferLogs = True

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = '/lustrehome/someone/Tau3Mu2018/CMSSW_10_6_1/src/SkimTools/test/run_Tau3Mu_MC2018_cfg.py'
config.JobType.maxJobRuntimeMin = 2800
config.Data.inputDataset = '/DsToTau_TauTo3Mu_March2020/someone-RunIIAutumn18DRPremix-102X-2f1667a4ab974bdf4cb2916f291c3603/USER'
config.Data.inputDBS = 'phys03'
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 3
#config.Data.outLFNDirBase = '/store/user/%s/' % (getUsernameFromSiteDB())
config.Data.publication = True
config.Data.publishDBS = 'phys03'
config.Data.outputDatasetTag = 'SkimTau3Mu_DsToTauTo3Mu_2018_v7_noTrg'

config.Site.storageSite = 'T2_IT_Bari'
#config.JobType.allowUndistributedCMSSW = True 
config.Site.ignoreGlobalBlacklist  = True
