import FWCore.ParameterSet.Config as cms
process = cms.Process('DIMU')
process.source = cms.Source('PoolSource', fileNames=cms.untracked.vstring())
process.TFileService = cms.Service('TFileService', fileName=cms.string('dimuon_2026.root'))
