import FWCore.ParameterSet.Config as cms
from FWCore.ParameterSet.VarParsing import VarParsing

options = VarParsing('analysis')
options.register('globalTag', '', VarParsing.multiplicity.singleton, VarParsing.varType.string, 'conditions to read')
options.register('isData', 0, VarParsing.multiplicity.singleton, VarParsing.varType.int, '1 for collision data')
options.parseArguments()

process = cms.Process('MUTAU')
process.source = cms.Source('PoolSource', fileNames = cms.untracked.vstring(options.inputFiles))
process.TFileService = cms.Service('TFileService', fileName = cms.string('MuTauTree.root'))
