# Re-run the two blocks whose jobs were lost to the T1_US_FNAL tape outage, nothing else.
from CRABClient.UserUtilities import config

config = config()

config.General.requestName = 'ElectronID_DoubleEG_2017B_missingBlocks'
config.General.workArea = 'crab_eleid'

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'eleid_ntuple_cfg.py'
config.JobType.pyCfgParams = ['isMC=False', 'GT=106X_dataRun2_v35']

config.Data.inputDataset = '/DoubleEG/Run2017B-UL2017_MiniAODv2-v1/MINIAOD'
config.Data.inputBlocks = [
    '/DoubleEG/Run2017B-UL2017_MiniAODv2-v1/MINIAOD#907c0c31-20a0-4f50-bc6b-8c4956d5ee6f',
    '/DoubleEG/Run2017B-UL2017_MiniAODv2-v1/MINIAOD#7db7d958-1de6-4bb1-a246-75a93ac5a1c6',
]
config.Data.splitting = 'LumiBased'
config.Data.unitsPerJob = 25
config.Data.lumiMask = 'https://cms-service-dqmdc.web.cern.ch/CAF/certification/Collisions17/13TeV/Legacy_2017/Cert_294927-306462_13TeV_UL2017_Collisions17_GoldenJSON.txt'
config.Data.publication = False

config.Site.storageSite = 'T2_IT_Pisa'
