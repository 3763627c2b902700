# crab submit -c crab_DoubleMuon_2016B.py
# The Configuration is called cfg here: crab finds it whatever its name.
from CRABClient.UserUtilities import config as crab_config
from CRABClient.UserUtilities import getUsernameFromCRIC as getUsername

cfg = crab_config()

cfg.General.requestName = 'DoubleMuon_Run2016B_HIPM_dimuon'
cfg.General.workArea = 'crab_dimuon_UL16'
cfg.General.transferOutputs = True
cfg.General.transferLogs = False

cfg.JobType.pluginName = 'Analysis'
cfg.JobType.psetName = 'dimuon_ntuple_cfg.py'
cfg.JobType.pyCfgParams = ['isData=1', 'era=2016preVFP']
cfg.JobType.maxMemoryMB = 2000

cfg.Data.inputDataset = '/DoubleMuon/Run2016B-ver2_HIPM_UL2016_MiniAODv2-v1/MINIAOD'
cfg.Data.splitting = 'LumiBased'
cfg.Data.unitsPerJob = 60
cfg.Data.runRange = '273150-275376'
cfg.Data.outLFNDirBase = '/store/user/%s/dimuon/UL16' % getUsername()
cfg.Data.publication = False

cfg.Site.storageSite = 'T2_DE_DESY'
