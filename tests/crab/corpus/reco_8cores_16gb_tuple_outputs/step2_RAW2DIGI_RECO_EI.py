import FWCore.ParameterSet.Config as cms
process = cms.Process('RECO')
process.options = cms.untracked.PSet(numberOfThreads=cms.untracked.uint32(8))
