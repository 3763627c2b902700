import sys
from CRABClient.UserUtilities import config, getUsernameFromCRIC
from samples_2017 import DATA_SAMPLES, request_name

config = config()

era, dataset = sorted(DATA_SAMPLES.items())[0]
config.General.requestName = request_name(era)
config.General.workArea = 'crab_jetht_2017'

config.JobType.pluginName = 'Analysis'
config.JobType.psetName = 'jetht_cfg.py'
config.JobType.maxMemoryMB = 2500

config.Data.inputDataset = dataset
config.Data.lumiMask = 'Cert_294927-306462_13TeV_UL2017_Collisions17_GoldenJSON.txt'
config.Data.splitting = 'LumiBased'
config.Data.unitsPerJob = 100
config.Data.publication = False
config.Data.outLFNDirBase = '/store/user/%s/jetht2017' % getUsernameFromCRIC()

config.Site.storageSite = 'T2_US_Nebraska'
config.Site.whitelist = ['T2_US_*', 'T1_US_FNAL']

def main():
    from CRABAPI.RawCommand import crabCommand
    for era, dataset in sorted(DATA_SAMPLES.items()):
        config.General.requestName = request_name(era)
        config.Data.inputDataset = dataset
        crabCommand('submit', config=config, dryrun='--dryrun' in sys.argv)

if __name__ == '__main__':
    main()
