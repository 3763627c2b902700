import os
from CRABClient.UserUtilities import config

config = config()
config.General.requestName = 'EGamma_2022D_photonID_runs357600to357800'
config.General.workArea = 'crab_photons'

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = os.path.join('python', 'photon_id_cfg.py')
config.JobType.numCores = 1

config.Data.inputDataset = '/EGamma/Run2022D-27Jun2023-v2/MINIAOD'
config.Data.lumiMask = 'Cert_Collisions2022_355100_362760_Golden.json'
config.Data.runRange = '357600-357800'
config.Data.splitting = 'EventAwareLumiBased'
config.Data.unitsPerJob = 150000
config.Data.publication = False

config.Site.storageSite = 'T2_CH_CERN'
