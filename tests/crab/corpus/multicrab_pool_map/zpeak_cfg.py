import FWCore.ParameterSet.Config as cms
process = cms.Process('ZPEAK')
process.source = cms.Source('PoolSource', fileNames=cms.untracked.vstring())
process.TFileService = cms.Service('TFileService', fileName=cms.string('zpeak.root'))
