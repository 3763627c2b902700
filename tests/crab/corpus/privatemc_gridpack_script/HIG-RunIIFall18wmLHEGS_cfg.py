import FWCore.ParameterSet.Config as cms
process = cms.Process('SIM')
process.source = cms.Source('EmptySource')
process.externalLHEProducer = cms.EDProducer('ExternalLHEProducer',
    args=cms.vstring('HToZdZd_MZd20_slc7_amd64_gcc700_tarball.tar.xz'), nEvents=cms.untracked.uint32(200))
