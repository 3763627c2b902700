import os
from CRABClient.UserUtilities import config
config = config()

config.General.requestName = 'DNNTuples_QCD_Pt_470to600'
config.General.workArea = 'crab_dnntuples'
config.General.transferOutputs = True
config.General.transferLogs = False

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'DeepNtuplizer.py'
config.JobType.sendExternalFolder = True
config.JobType.allowUndistributedCMSSW = True

config.Data.inputDataset = '/QCD_Pt_470to600_TuneCP5_13TeV_pythia8/RunIISummer20UL18MiniAODv2-106X_upgrade2018_realistic_v16_L1v1-v2/MINIAODSIM'
config.JobType.pyCfgParams = ['outputFile=output', 'isTrainSample=1']
config.JobType.pyCfgParams += ['inputDataset=%s' % config.Data.inputDataset]

config.Data.inputDBS = 'global'
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = 4
config.Data.totalUnits = 40
config.Data.outLFNDirBase = '/store/user/%s/DNNTuples/' % os.environ.get('USER', 'nobody')
config.Data.publication = False
config.Data.allowNonValidInputDataset = True

# uncomment this part to use CRAB to submit to FNAL_LPC
# config.Data.ignoreLocality = True
# config.Site.whitelist = ['T3_US_FNALLPC']
# config.Site.ignoreGlobalBlacklist = True

config.Site.storageSite = 'T2_CH_CERN'
