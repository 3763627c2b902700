# CRAB configuration file, driven by the submit script through the environment:
#   CRAB_DATASET=/X/Y/Z CRAB_UNITS=3 crab submit crab_config.py
# Without the variables it falls back to the 2018 JetHT sample, as when run by hand.
import os

from CRABClient.UserUtilities import config

config = config()

dataset = os.environ.get('CRAB_DATASET', '/JetHT/Run2018C-UL2018_MiniAODv2-v1/MINIAOD')
(_, sample, version, tier) = dataset.split('/')

config.General.requestName = os.environ.get('CRAB_REQUESTNAME', '%s_%s' % (sample, version.split('-')[0]))
config.General.workArea = os.environ.get('CRAB_WORKAREA', 'crab_jobs')
config.General.transferLogs = False

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = os.environ.get('CRAB_PSET', 'jetht_skim_cfg.py')
config.JobType.maxMemoryMB = os.environ.get('CRAB_MEMORY', '2500')  # a string, as the environment gives it

config.Data.inputDataset = dataset
config.Data.splitting = 'FileBased'
config.Data.unitsPerJob = os.environ.get('CRAB_UNITS', '3')
config.Data.publication = False
config.Data.outLFNDirBase = '/store/group/phys_jetmet/%s/' % os.environ.get('USER', 'nobody')

config.Site.storageSite = os.environ.get('CRAB_STORAGE', 'T2_DE_DESY')
