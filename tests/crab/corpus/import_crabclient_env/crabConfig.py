# Run with: crab submit -c crabConfig.py (or python3 crabConfig.py to print the settings)
import os
import CRABClient
from CRABClient.UserUtilities import config

dataset = os.environ.get('CRAB_DATASET', '/SingleElectron/Run2016B-ver2_HIPM_UL2016_MiniAODv2-v2/MINIAOD')
_, primary, processed, tier = dataset.split('/')
version = 'v5'

config = config()
config.General.requestName = '_'.join([primary, processed.split('-')[0], version])
config.General.workArea = os.path.join('crab', version)

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'cfg', 'electron_ntuple_cfg.py')
config.JobType.pyCfgParams = ['dataset=' + dataset]

config.Data.inputDataset = dataset
config.Data.splitting = 'LumiBased'
config.Data.unitsPerJob = 120
config.Data.publication = False

config.Site.storageSite = 'T2_CH_CSCS'

if __name__ == '__main__':
    print(config)
